import { describeTemplateProject } from '../support/template-project.js';

describeTemplateProject('servicenow');
