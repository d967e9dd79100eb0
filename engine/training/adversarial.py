"""An adversarial term for a decoder, as Stable Diffusion's autoencoders were trained (Esser et
al. 2021, "Taming Transformers", whose PatchGAN critic and adaptive weight this follows): L1 and
an edge term settle for the average of what a latent could mean, which on grass, rock and canopy
is a blur; a critic that tells decoded patches from drawn ones pushes the decoder to draw one
plausible texture instead, hard-edged as the scenes are.

Both players train in one optimizer step (`train.run_stage`): the decoder's loss reads the
critic through detached weights and the critic's loss reads detached pictures, so neither
gradient leaks into the other player."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn
from torch.func import functional_call


def patch_critic(channels: tuple[int, ...] = (32, 64, 128)) -> nn.Module:
    """A PatchGAN critic (pix2pix): one score per overlapping patch (about 46x46 pixels at three
    stride-2 levels), so it judges texture and edges, not the layout of a whole crop."""
    layers: list[nn.Module] = []
    width = 3
    for i, out in enumerate(channels):
        layers.append(nn.Conv2d(width, out, 4, stride=2, padding=1))
        if i:  # no normalisation on the first level, as pix2pix
            layers.append(nn.GroupNorm(min(16, out // 4), out))
        layers.append(nn.LeakyReLU(0.2))
        width = out
    layers.append(nn.Conv2d(width, 1, 3, padding=1))
    return nn.Sequential(*layers)


def adversarial_loss(
    critic: nn.Module,
    real: torch.Tensor,
    fake: torch.Tensor,
    reconstruction: torch.Tensor,
    last_layer: torch.Tensor,
    weight: float,
) -> torch.Tensor:
    """Hinge losses of both players, added to the decoder's `reconstruction` loss with the
    adversarial term scaled so its gradient at the decoder's `last_layer` is `weight` times the
    reconstruction's (Taming's adaptive weight: no fixed factor suits every stage of training)."""
    frozen = {name: p.detach() for name, p in critic.named_parameters()}
    fooled = -functional_call(critic, frozen, (fake,)).float().mean()
    rec_grad = torch.autograd.grad(reconstruction, last_layer, retain_graph=True)[0]
    adv_grad = torch.autograd.grad(fooled, last_layer, retain_graph=True)[0]
    scale = (rec_grad.norm() / (adv_grad.norm() + 1e-4)).clamp(max=1e4).detach()
    judged = (
        F.relu(1 - critic(real).float()).mean() + F.relu(1 + critic(fake.detach()).float()).mean()
    )
    return reconstruction + weight * scale * fooled + judged
