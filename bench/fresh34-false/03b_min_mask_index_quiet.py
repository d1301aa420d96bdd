import torch


def softmax_entropy(x: torch.Tensor) -> torch.Tensor:
    return -(x.softmax(1) * x.log_softmax(1)).sum(1)


def forward_and_adapt(x, model, optimizer, margin):
    optimizer.zero_grad()
    outputs = model(x)
    entropys = softmax_entropy(outputs)
    filter_ids_1 = torch.where(entropys < margin)
    entropys = entropys[filter_ids_1]
    loss = entropys.mean(0)
    loss.backward()

    optimizer.step()
    entropys2 = softmax_entropy(model(x))
    entropys2 = entropys2[entropys2 < margin]
    loss_second = entropys2.mean(0)
    loss_second.backward()
    optimizer.step()
    return outputs


if __name__ == "__main__":
    model = torch.nn.Linear(5, 4)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(3):
        forward_and_adapt(torch.randn(6, 5), model, optimizer, 100.0)
    print("runs: both backwards, every call")
