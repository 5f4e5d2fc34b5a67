package main

// Skills (SEP-2640): the skills in skills/, each directory with a
// SKILL.md, served as skill:// resources with skills/list, skills/get and
// resources/directory/read. The suite's sep-2640-skills-* scenarios read
// them: the directory scenario descends into the first skill's
// references/ directory.

import (
	"embed"
	"io/fs"

	"github.com/baton-mcp/baton/server"
)

//go:embed skills
var skillFiles embed.FS

func addSkills(srv *server.Server) error {
	sub, err := fs.Sub(skillFiles, "skills")
	if err != nil {
		return err
	}
	return srv.AddSkills(sub)
}
