package provision

import (
	"context"
	"strings"
)

// desktopStep turns the desktop off, as the write-up did: boot to
// multi-user.target. With Now it also stops the display manager at once.
type desktopStep struct{}

func (desktopStep) Name() string { return "desktop" }

func (desktopStep) Check(ctx context.Context, t *Target) (Change, error) {
	var ch Change
	if t.Facts.BootTarget == "graphical.target" {
		ch.Needed = true
		ch.Commands = append(ch.Commands, "systemctl set-default multi-user.target")
		ch.Note = "the desktop is off from the next boot"
	}
	if t.Now {
		out, _ := t.run(ctx, "systemctl is-active display-manager.service 2>/dev/null || true")
		if strings.TrimSpace(out) == "active" {
			ch.Needed = true
			ch.Commands = append(ch.Commands, "systemctl stop display-manager.service")
			ch.Note = "the desktop is off now and from the next boot"
		}
	}
	return ch, nil
}

func (s desktopStep) Apply(ctx context.Context, t *Target) error {
	ch, err := s.Check(ctx, t)
	if err != nil {
		return err
	}
	for _, cmd := range ch.Commands {
		if _, err := t.run(ctx, cmd); err != nil {
			return err
		}
	}
	return t.refresh(ctx)
}
