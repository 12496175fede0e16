// a.js — imports b.js twice over (a diamond, no cycle) and a package name
import { b } from './b.js';
import { c } from './c.js';
import 'not-relative';
export const a = () => b() + c();
