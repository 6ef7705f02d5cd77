"""Agent harness hooks (Claude Code). (Being built.)"""
