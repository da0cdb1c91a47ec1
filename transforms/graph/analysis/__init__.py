"""Reading a TF1 graph program: its data model, statement kinds, expressions, run-site
recognition, name resolution, and the checks that make TFM201's rewrite safe."""
