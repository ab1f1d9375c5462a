"""Kernel resource usage read from what a build leaves behind: ptxas logs, cuobjdump listings, cubins, fatbins, and CUDA sources."""
