"""Devil's Advocate (anticipatory reflection, paper 000/001): the node functions of Algorithm 1.

The graph in ``graphs/devils_advocate.py`` wires these nodes in the order of the paper's
Algorithm 1; each module here holds one node family (plan, act, remedy, align, complete,
describe, map_element, reflect) or the mechanical steps around the stack and the env.
"""
