"""A two-stage pipeline on one GPU, as pipeline parallelism runs each
stage: stage one on its own stream, stage two on another, four
micro-batches a step handed over by events (GPipe's schedule: every
micro-batch forward, then backward), SGD, 40 steps."""
import torch

STEPS, MICRO_BATCHES = 40, 4
torch.manual_seed(0)
stages = [torch.nn.Sequential(torch.nn.Linear(1024, 2048), torch.nn.GELU(), torch.nn.Linear(2048, 1024)).cuda()
          for _ in range(2)]
streams = [torch.cuda.Stream() for _ in stages]
parameters = [p for stage in stages for p in stage.parameters()]
optimizer = torch.optim.SGD(parameters, lr=1e-2, momentum=0.9)
batch = torch.randn(MICRO_BATCHES * 64, 1024, device="cuda")
target = torch.randn(MICRO_BATCHES * 64, 1024, device="cuda")
torch.cuda.synchronize()
losses = []
for step in range(STEPS):
    outputs = []
    for micro in batch.chunk(MICRO_BATCHES):
        with torch.cuda.stream(streams[0]):
            micro.record_stream(streams[0])
            handed = stages[0](micro)
            ready = torch.cuda.Event()
            ready.record()
        with torch.cuda.stream(streams[1]):
            streams[1].wait_event(ready)
            handed.record_stream(streams[1])
            outputs.append(stages[1](handed))
    torch.cuda.current_stream().wait_stream(streams[1])
    loss = torch.nn.functional.mse_loss(torch.cat(outputs), target)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
losses = torch.stack(losses).cpu()
print("steps", STEPS, "loss decreased", bool(losses[-1] < losses[0]))
