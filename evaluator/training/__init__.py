"""Pretraining: the Lightning data module, Lightning module, val report and the LightningCLI."""
