"""NVIDIA's compiler in the loop: find nvcc and ptxas (discovery), run them with the
resource report for each source and architecture in a bounded pool (compile), and
turn CMake's compile_commands.json into such builds (compile_commands)."""
