"""The pre-run review: one document that says whether a long run can work, and why."""
