"""Embedders shared by every engine. (Being built.)"""
