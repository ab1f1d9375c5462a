"""The occupancy engine and the searches built on it: cuda_occupancy.h's arithmetic,
the block-size optimizer, what-if cliffs and the calculator's curves."""
