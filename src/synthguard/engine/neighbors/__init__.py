"""The neighbour engine: one row distance, exact k-NN and radius counts, chunked and vectorised."""

from .engine import (
                     Neighbors,
                     available_backends,
                     count_within,
                     kneighbors,
                     kneighbors_within,
                     nearest_distances,
                     nearest_ties,
                     pairwise_distances,
)
from .metric import DistanceMetric, gower, hamming, lp

__all__ = ["DistanceMetric", "Neighbors", "available_backends", "count_within", "gower", "hamming",
           "kneighbors", "kneighbors_within", "lp", "nearest_distances",
           "nearest_ties", "pairwise_distances"]
