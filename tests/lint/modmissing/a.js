// a.js — imports a module that is not there
import '../modcycle/nothing-here.js';
