"""pytorch_lightning owns the loop: Trainer.fit of an MLP on batches of 256
from a DataLoader, AdamW, 40 steps, with Lightning's callbacks, hooks and
its own device moves around each batch, and three validation batches every
ten steps (their forward passes begin as a training step does)."""
import pytorch_lightning as pl
import torch

STEPS = 40


class Classifier(pl.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(512, 2048), torch.nn.ReLU(),
                                       torch.nn.Linear(2048, 2048), torch.nn.ReLU(),
                                       torch.nn.Linear(2048, 10))
        self.losses = []

    def training_step(self, batch, index):
        x, y = batch
        loss = torch.nn.functional.cross_entropy(self.net(x), y)
        self.losses.append(loss.detach())
        return loss

    def validation_step(self, batch, index):
        x, y = batch
        self.log("val_loss", torch.nn.functional.cross_entropy(self.net(x), y))

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=1e-3)


pl.seed_everything(0, verbose=False)
data = torch.utils.data.TensorDataset(torch.randn(256 * STEPS, 512), torch.randint(0, 10, (256 * STEPS,)))
loader = torch.utils.data.DataLoader(data, batch_size=256, shuffle=False)
validation = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(data.tensors[0][:768], data.tensors[1][:768]),
                                         batch_size=256)
model = Classifier()
trainer = pl.Trainer(accelerator="gpu", devices=1, max_steps=STEPS, logger=False, enable_checkpointing=False,
                     enable_progress_bar=False, enable_model_summary=False, val_check_interval=10,
                     num_sanity_val_steps=0)
trainer.fit(model, loader, validation)
losses = torch.stack(model.losses).cpu()
print("steps", len(model.losses), "loss decreased", bool(losses[-1] < losses[0]))
