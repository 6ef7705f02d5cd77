"""HTTP API (FastAPI) and web console. (Being built.)"""
