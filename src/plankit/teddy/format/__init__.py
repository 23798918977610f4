"""The TeDDy plan format: the plan model, parsing, rendering and the answer-to-plan
sanitizer."""
