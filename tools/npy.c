/* .npy reading and writing for the CLI (being written). */
