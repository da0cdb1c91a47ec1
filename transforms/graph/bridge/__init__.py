"""TFM203's parts: what a wrapped region is, how its run sites read, and the code written into the file."""
