"""Privacy metrics on the files alone: copies, distances, distinguishability, membership."""
