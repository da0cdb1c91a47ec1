"""TFM6xx: the dataset loaders TF1 shipped for its tutorials (gone from TensorFlow 2), written into the
file on TF2 APIs with TF1's behaviour."""
