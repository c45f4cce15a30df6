"""Training: the loop over stacked members, optimizers, weights, evaluation, phases and interventions."""
