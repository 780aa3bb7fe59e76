"""AutoPlan (paper 004) node functions: collect (thought, action, formalizer, env step),
reflect (SIR), plan (Upd) and batch (seeded sampling, Send fan-outs and their fan-ins)."""
