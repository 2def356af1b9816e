"""The subcommands of `crucible-spec`: each module adds its parser and handler."""
