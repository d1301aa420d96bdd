import torch


def learn(params, blocks, x, refine):
    opt = torch.optim.Adam(params, lr=0.1)
    for it in range(50):
        cur = x
        opt.zero_grad()
        for j, layer in enumerate(blocks):
            cur = layer(cur)
        cur.sum().backward()
        opt.step()


# Runs under torch: one backward per outer iteration, each after that iteration's zero_grad.
if __name__ == "__main__":
    torch.manual_seed(0)
    blocks = [torch.nn.Linear(3, 3) for _ in range(4)]
    learn(list(blocks[0].parameters()), blocks, torch.randn(2, 3), 2)
    print("OK")
