"""Foundation pieces shared by every engine: errors, ids, clocks, actors, config, namespaces."""
