"""`grok report`: a sweep group's tables, paired lines, circuit, fork and target reports."""
