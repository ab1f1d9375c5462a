"""`lint` as a library: build output joined with launch settings, rules, budgets, baselines, and the lint document with its formats."""
