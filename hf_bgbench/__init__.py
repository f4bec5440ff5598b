"""hf_bgbench: how much does an image classifier lean on the background?"""

__version__ = "0.1.0"
