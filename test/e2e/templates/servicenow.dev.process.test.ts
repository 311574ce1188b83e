import { describeTemplateDevLoop } from '../support/template-project.js';

describeTemplateDevLoop('servicenow');
