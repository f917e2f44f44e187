"""Synthetic (reference, generated) pairs with one mismatch error type each."""
