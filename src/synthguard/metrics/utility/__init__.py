"""Machine-learning utility: train on the release, test on real rows."""
