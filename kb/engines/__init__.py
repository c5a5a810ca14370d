"""Search engines behind one contract (contract.py), chosen by name (registry.py), one module
per engine.
"""
