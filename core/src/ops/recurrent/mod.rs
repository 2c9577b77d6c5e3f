//! Recurrent layers: `LSTM`, `GRU`, `RNN`.

pub mod lstm;
pub mod rnn;
