"""Writing the TF2 program TFM201 produces: which step functions, their code, state created
once, and the module's finishing touches."""
