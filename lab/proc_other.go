//go:build !unix

package lab

import (
	"errors"
	"os"
	"syscall"
)

// errNotHere is what the lab's process calls give where it cannot run;
// checkHost refuses first.
var errNotHere = errors.New("the lab needs Linux")

func detached() *syscall.SysProcAttr     { return nil }
func kill(int) error                     { return errNotHere }
func pause(int) error                    { return errNotHere }
func cont(int) error                     { return errNotHere }
func signal0(int) error                  { return errNotHere }
func lockFile(*os.File) error            { return errNotHere }
func tryLockFile(*os.File) (bool, error) { return false, errNotHere }

func deviceOf(string) (string, error) { return "", errNotHere }
