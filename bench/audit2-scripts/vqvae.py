# real NearestEmbed (VQ-VAE vq_vae/nearest_embed.py, parent / fix) used like auto_encoder.VQ_CVAE: emb(z_e.detach()) trains the codebook
import sys, importlib, torch
ne = importlib.import_module(sys.argv[1])
emb = ne.NearestEmbed(10, 4)
z_e = torch.randn(2, 4, 3, 3, requires_grad=True)
z_q, _ = emb(z_e, weight_sg=True)
emb_out, _ = emb(z_e.detach())
loss = (z_q ** 2).mean() + ((emb_out - z_e.detach()) ** 2).mean()
loss.backward()
print(sys.argv[1], 'ran cleanly, codebook grad', emb.weight.grad is not None)
