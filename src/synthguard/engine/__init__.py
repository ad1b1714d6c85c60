"""The computing engine: the neighbour search, caches, parallel map, memory and JIT helpers."""
