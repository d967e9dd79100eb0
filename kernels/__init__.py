"""Triton kernels, each with a plain-torch reference and a dispatcher."""
