"""Reproduction for `magvit2_discr_stale_gen_grads`: lucidrains/magvit2-pytorch commit dd86b76 ("zero grad before, always detach fakes during discriminator training").

Our own minimal program with the shape of the buggy statements (not the project's code): it shows
the buggy form's effect under torch and that the fixed form does not have it.
Claim: in the discriminator step `fake_logits = self.discr(fake)` uses the reconstruction without `.detach()`, so
`discr_loss.backward()` also writes gradients into the tokenizer (generator) parameters; the trainer zeroes the
generator optimizer only after its own step, so those discriminator-loss gradients are still in `.grad` when the
next generator step's backward accumulates onto them and `optimizer.step()` applies them; the fix detaches the fakes
(and zeroes the grads before each phase).
"""

import torch


def hinge_discr_loss(fake, real):
    return (torch.relu(1 + fake) + torch.relu(1 - real)).mean()


def train(fixed):
    torch.manual_seed(0)
    gen = torch.nn.Linear(4, 4)            # the video tokenizer: recon_video = model(video)
    discr = torch.nn.Linear(4, 1)
    opt = torch.optim.SGD(gen.parameters(), lr=0.1)
    dopt = torch.optim.SGD(discr.parameters(), lr=0.1)
    data = [torch.randn(3, 4) for _ in range(4)]
    gen_step_grads = []
    for step in range(2):
        video = data[2 * step]                                  # generator (main model) phase
        if fixed:
            opt.zero_grad()
        loss = (gen(video) - video).pow(2).mean() - discr(gen(video)).mean()
        loss.backward()
        gen_step_grads.append(gen.weight.grad.clone())
        opt.step()
        if not fixed:
            opt.zero_grad()

        video = data[2 * step + 1]                              # discriminator phase
        if fixed:
            dopt.zero_grad()
        recon_video = gen(video)
        fake = recon_video.detach() if fixed else recon_video
        discr_loss = hinge_discr_loss(discr(fake), discr(video))
        discr_loss.backward()
        dopt.step()
        if not fixed:
            dopt.zero_grad()
    return gen_step_grads


buggy = train(fixed=False)
fixed = train(fixed=True)
assert torch.allclose(buggy[0], fixed[0])       # first generator step: same gradient
assert not torch.allclose(buggy[1], fixed[1])   # second: the buggy one also carries the discriminator loss's gradient

print("CONFIRMED")
