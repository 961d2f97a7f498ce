"""Wyoming: mavend as a Wyoming service, satellites, and speech models on other machines.

protocol.py is the one reader and writer of Wyoming events; everything else uses it.
"""
