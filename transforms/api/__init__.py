"""TFM1xx: mechanical API changes driven by the data tables: symbol renames, keyword renames and
reorders, changed arguments, compat.v1 import spelling, and the graph-mode guard for what is left."""
