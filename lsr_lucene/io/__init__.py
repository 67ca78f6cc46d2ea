"""Reading and writing the project's files: corpora, topics, vectors, runs, and outputs that appear only when complete."""
