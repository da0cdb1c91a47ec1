"""Sessions and their run sites (sess.run, .eval(), .run()) and what replaces them: calls of
step functions whose results stay usable as NumPy."""
