"""TF1 RNN cells and dynamic_rnn / static_rnn runs -> Keras recurrent layers."""
