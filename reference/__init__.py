"""The oracle: straightforward, bit-exact implementations of every op, built on `spec/`."""
