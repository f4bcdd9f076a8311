"""Allocation simulator: would the emitted DRA objects schedule on a given set of nodes/devices?"""
