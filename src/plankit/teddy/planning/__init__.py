"""Planning with models: model access through llm, manual mode, the scripted test model
and the re-plan loop."""
