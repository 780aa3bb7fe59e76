"""What every method's nodes run on: the model caller and its records (calls, journal, recording,
scripted and local models, usage), the node decorator, the shared state, context and channels,
and the one door to live environments."""
