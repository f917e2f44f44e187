"""Training the base: pretraining (its data and Lightning modules, val report and LightningCLI),
its continued training on real bases (adapt), and the span tagger's training."""
