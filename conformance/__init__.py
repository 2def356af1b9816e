"""The wire protocol, `serve`, the conformance runner, vectors and the oracle tools."""
