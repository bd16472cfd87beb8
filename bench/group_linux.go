package bench

import (
	"context"
	"errors"
	"runtime"
	"syscall"
	"time"
	"unsafe"
)

const canMultiplex = true

// group runs the clients ids on one OS thread until ctx ends: each has a
// transaction in flight on its non-blocking socket, and one epoll_wait
// gives the thread every socket with an answer, as one of pgbench's
// threads does with its clients. A client whose connection breaks
// connects again, counted, as in client.
func group(ctx context.Context, w Workload, ids []int, workers []Worker, all []*stats, measured time.Time, connect *lockedHist) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	epfd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil { // no epoll after all: a goroutine per client
		done := make(chan struct{}, len(ids))
		for _, id := range ids {
			go func() {
				client(ctx, w, id, &workers[id], all[id], measured, connect)
				done <- struct{}{}
			}()
		}
		for range ids {
			<-done
		}
		return
	}
	defer syscall.Close(epfd)

	began := make([]time.Time, len(workers))
	// watch puts a client's socket in non-blocking mode and in the epoll
	// set; a client that cannot be watched is counted and let go, to be
	// connected again.
	watch := func(id int) bool {
		err := errors.New("bench: a new client cannot be multiplexed")
		if a, ok := workers[id].(Async); ok && a.Fd() >= 0 {
			if err = syscall.SetNonblock(a.Fd(), true); err == nil {
				err = syscall.EpollCtl(epfd, syscall.EPOLL_CTL_ADD, a.Fd(), &syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(id)})
			}
		}
		if err != nil {
			all[id].record(w, time.Now(), time.Now(), measured, Outcome{}, err)
			workers[id].Close()
			workers[id] = nil
		}
		return err == nil
	}
	drop := func(id int) {
		a := workers[id].(Async)
		_ = syscall.EpollCtl(epfd, syscall.EPOLL_CTL_DEL, a.Fd(), nil)
		a.Close()
		workers[id] = nil
	}
	// start begins the client's next transaction, connecting again first
	// when it has to, until one is under way or the run is over.
	start := func(id int) {
		for ctx.Err() == nil {
			if workers[id] == nil && (!reconnect(ctx, w, id, &workers[id], all[id], connect) || !watch(id)) {
				continue
			}
			began[id] = time.Now()
			err := workers[id].(Async).Begin()
			if err == nil {
				return
			}
			if all[id].record(w, time.Now(), began[id], measured, Outcome{}, err) {
				drop(id)
			}
		}
	}
	for _, id := range ids {
		watch(id)
		start(id)
	}
	busy := len(ids) // clients not done with a fixed amount of work
	events := make([]syscall.EpollEvent, len(ids))
	for ctx.Err() == nil && busy > 0 {
		n, err := epollWait(epfd, events, 100) // ms: how late the end of the run may be seen
		if err != nil {
			if err == syscall.EINTR {
				continue
			}
			return
		}
		for _, ev := range events[:n] {
			id := int(ev.Fd)
			if workers[id] == nil {
				continue
			}
			done, out, err := workers[id].(Async).Readable()
			if !done {
				continue
			}
			now := time.Now()
			if err != nil && ctx.Err() != nil {
				return // cut off by the end of the run
			}
			if all[id].record(w, now, began[id], measured, out, err) {
				drop(id)
			}
			if all[id].finished() {
				if workers[id] != nil {
					drop(id)
				}
				busy--
				continue
			}
			start(id)
		}
	}
}

// epollWait is epoll_pwait without a signal mask, as a raw system call: the
// runtime does not see the thread leave for a system call, so while it
// waits for answers nothing hands its P to another thread and back, which
// cost two wake-ups of the runtime's own poller per round trip when it
// did. The wait is short while a run goes on; the runtime's preemption
// signal ends a longer one (EINTR), as does the timeout.
func epollWait(epfd int, events []syscall.EpollEvent, msec int) (int, error) {
	r, _, errno := syscall.RawSyscall6(syscall.SYS_EPOLL_PWAIT, uintptr(epfd), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), uintptr(msec), 0, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(r), nil
}
